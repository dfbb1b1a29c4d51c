"""`python -m pipelines.cli`: the same as the `gpu-finops` console script."""

from pipelines.cli import main

raise SystemExit(main())
