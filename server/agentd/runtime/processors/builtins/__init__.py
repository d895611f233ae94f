"""The built-in processors, one module each; `catalogue` lists them by name."""
