import pytest

# The shared helpers assert; rewriting them keeps pytest's detailed failure messages.
pytest.register_assert_rewrite("tests.cli.helpers")
