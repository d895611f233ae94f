"""Plain helpers for agentd's own tests, one module a subject (tests/ is on
sys.path, so every folder imports them as `support.<module>`). Fixtures live in
the conftest.py of the folder that uses them."""
