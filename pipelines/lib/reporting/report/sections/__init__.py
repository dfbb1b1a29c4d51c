"""One module per section of the report: its heading (`HEADING`) and `section(con)`, which reads its marts."""
