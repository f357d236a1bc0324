"""Project paths: write-path globs and the questions the checker asks about them."""
