"""The call path: a tool call from arguments to envelope (registry, engine, runtime, bounds, approval)."""
