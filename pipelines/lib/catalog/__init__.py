"""The catalogue of every source of rows (`registry.CATALOGUE`): what each is, where it lands, what it must satisfy."""
