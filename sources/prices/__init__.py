"""Market prices and exchange rates fetched from providers' public endpoints."""
