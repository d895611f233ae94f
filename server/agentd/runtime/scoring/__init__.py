"""Live scorers: what scores a run after it answered (scorer.py, the
built-ins in builtins.py), where scores are kept (record.py, store.py), and
the background scoring (service.py). Their public names are re-exported from
agentd.runtime."""
