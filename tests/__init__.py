import pytest

# The shared helpers assert; let pytest show the values behind a failed assertion there too.
pytest.register_assert_rewrite("tests.helpers")
