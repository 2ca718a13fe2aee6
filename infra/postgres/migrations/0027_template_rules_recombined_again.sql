-- `runnable` holds more of the guide's rules (Kubernetes names for labels and annotations, named
-- users and groups of an exposed URL, a new volume's size above 0, an absolute SSH key
-- directory, user and group ids in Kubernetes' range, GPU fractions above 0, extended resources
-- with a quantity): the template read model is replayed from the start of the log by the
-- projector, so a row stored before these rules says whether a submission would now be taken.
TRUNCATE template_catalogue;
DELETE FROM consumer_checkpoints WHERE name = 'projection:template_catalogue';
DELETE FROM follower_faults WHERE name = 'projection:template_catalogue';
