"""Failed logins per client id and per address, in a sliding window."""

import pytest

from infra.security.login_throttle import LoginThrottle, LoginThrottledError


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_past_the_limit_a_client_waits_until_its_oldest_failure_leaves_the_window() -> None:
    clock = Clock()
    throttle = LoginThrottle(per_client=3, per_address=100, window_s=60, clock=clock)
    for _ in range(3):
        throttle.check("bot", "10.0.0.1")
        throttle.failed("bot", "10.0.0.1")
        clock.now += 10
    with pytest.raises(LoginThrottledError) as refused:
        throttle.check("bot", "10.0.0.1")
    assert refused.value.retry_after_s == 30  # the first failure (at 1000) leaves at 1060
    throttle.check("other-bot", "10.0.0.2")  # another client, another address: not affected
    clock.now = 1060.0
    throttle.check("bot", "10.0.0.1")


def test_one_address_trying_many_client_ids_is_throttled_too() -> None:
    clock = Clock()
    throttle = LoginThrottle(per_client=100, per_address=5, window_s=60, clock=clock)
    for i in range(5):
        throttle.failed(f"guess-{i}", "10.0.0.9")
    with pytest.raises(LoginThrottledError):
        throttle.check("yet-another", "10.0.0.9")
    throttle.check("yet-another", "10.0.0.10")
