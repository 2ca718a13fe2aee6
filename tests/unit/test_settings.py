import msgspec
import pytest

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
