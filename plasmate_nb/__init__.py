"""plasmate_nb: inspect, teach and validate plasmate.trace.v1 browser sessions in Jupyter."""
