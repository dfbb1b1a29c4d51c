"""The bottom layer: helpers every other package may use and that use nothing of `pipelines` themselves."""
