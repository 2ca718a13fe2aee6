"""An org tree for the use-case tests, made through the org-unit use cases over the fakes."""

from uuid import UUID, uuid4

from domain.commands import CreateCluster, CreateDepartment, CreateProject
from domain.events import EventMetadata
from services import org_units
from tests.fakes import Ids, InMemoryStreams

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")


async def tree(streams: InMemoryStreams) -> tuple[UUID, str, str, str]:
    """A cluster, a department in it and two projects in that: their ids."""
    ids, cluster = Ids(), uuid4()
    await org_units.create_cluster(
        CreateCluster(cluster_id=cluster, name="east", metadata=SYSTEM), streams=streams
    )
    department = await org_units.create_department(
        CreateDepartment(cluster_id=cluster, name="ml", metadata=SYSTEM), streams=streams, ids=ids
    )
    projects = [
        await org_units.create_project(
            CreateProject(
                cluster_id=cluster, department_id=department.state, name=name, metadata=SYSTEM
            ),
            streams=streams,
            ids=ids,
        )
        for name in ("llm", "vision")
    ]
    return cluster, department.state, projects[0].state, projects[1].state
