import msgspec
import pytest

from infra.jetstream.outbox_relay import stream_config
from infra.settings import Settings


def test_defaults_need_no_environment() -> None:
    settings = Settings.from_env({})
    assert settings.api_port == 8080
    assert settings.data_dir == ".trainplate"
    assert settings.nats.stream == "TRAINPLATE"


def test_documented_variables_and_nested_ones_are_read_and_typed() -> None:
    settings = Settings.from_env(
        {
            "TRAINPLATE_DATABASE_URL": "postgresql://db/x",
            "TRAINPLATE_NATS_URL": "nats://broker:4222",
            "TRAINPLATE_API_PORT": "9000",
            "TRAINPLATE_DATA_DIR": "/var/lib/trainplate",
            "TRAINPLATE_RELAY__BATCH_SIZE": "250",
            "TRAINPLATE_DATABASE__STATEMENT_TIMEOUT_MS": "5000",
            "UNRELATED": "ignored",
            "TRAINPLATE_NO_SUCH_SETTING": "ignored",
        }
    )
    assert settings.database.url == "postgresql://db/x"
    assert settings.nats.url == "nats://broker:4222"
    assert settings.api_port == 9000
    assert settings.data_dir == "/var/lib/trainplate"
    assert settings.relay.batch_size == 250
    assert settings.database.statement_timeout_ms == 5000


def test_a_bad_value_fails_at_start_up_naming_the_setting() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"\$\.relay\.batch_size"):
        Settings.from_env({"TRAINPLATE_RELAY__BATCH_SIZE": "many"})


def test_local_workloads_ids_are_a_range_far_from_users_that_ends_before_minus_one() -> None:
    assert Settings.from_env({}).submitter.local_ids == range(0x7000_0000, 0x7001_0000)
    chosen = Settings.from_env(
        {
            "TRAINPLATE_SUBMITTER__LOCAL_ID_FIRST": "200000",
            "TRAINPLATE_SUBMITTER__LOCAL_ID_COUNT": "10",
        }
    )
    assert chosen.submitter.local_ids == range(200_000, 200_010)
    with pytest.raises(msgspec.ValidationError, match=r"\$\.submitter\.local_id_first"):
        Settings.from_env({"TRAINPLATE_SUBMITTER__LOCAL_ID_FIRST": "0"})
    with pytest.raises(msgspec.ValidationError, match=r"past 4294967294 - at `\$\.submitter`"):
        Settings.from_env({"TRAINPLATE_SUBMITTER__LOCAL_ID_FIRST": str(2**32 - 10)})


def test_the_streams_are_kept_on_as_many_servers_as_the_nats_cluster_is_told() -> None:
    assert stream_config(Settings.from_env({}).nats).num_replicas == 1
    nats = Settings.from_env({"TRAINPLATE_NATS__REPLICAS": "3"}).nats
    assert stream_config(nats).num_replicas == 3
    with pytest.raises(msgspec.ValidationError, match=r"\$\.nats\.replicas"):
        Settings.from_env({"TRAINPLATE_NATS__REPLICAS": "6"})  # JetStream keeps at most 5
