"""`python -m app` runs the same server as the `attention-lab` command."""

from app.server.cli import main

if __name__ == "__main__":
    main()
