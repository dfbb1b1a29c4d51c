"""Market price feeds and ECB exchange rates: the feed list, fetching or reading offline, and loading a day."""
