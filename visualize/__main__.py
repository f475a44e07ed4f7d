"""`python -m visualize EXPR --values a=2,b=-3 --out graph.svg [--backprop page.html]`."""

from visualize.cli import main

raise SystemExit(main())
