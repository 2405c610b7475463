"""Layer 1.0: small helpers that touch no files (parameter ranges and the cost check, what counts
as a finite number, text, a long command's stages, parallel runs); they import only
`tealeaves.errors` and each other."""
