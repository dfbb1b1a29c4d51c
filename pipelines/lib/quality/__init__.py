"""What loaded data must satisfy: Great Expectations suites, their facts per source, and delivery freshness."""
