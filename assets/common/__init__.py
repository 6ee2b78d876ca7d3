"""Asset machinery every domain shares: partitions, quality suites, reports, metadata."""
