"""`python -m logparse` runs the logdiag command line."""

from logparse.cli.main import main

if __name__ == "__main__":
    main()
