"""One module per kind of figure; each draw(runs, out_dir) returns the Figures it wrote."""
