"""Serve the demo site: ``python -m webmcp_nb.demo [--port N]``."""

import argparse
import threading

from . import serve


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m webmcp_nb.demo", description=__doc__)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    args = parser.parse_args(argv)
    demo = serve(args.port)
    print(f"Demo site at {demo.url} (Ctrl-C to stop)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        demo.stop()


if __name__ == "__main__":
    main()
