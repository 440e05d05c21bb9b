"""The build side: BuilderConfig, the Builder and its passes, precision, calibration."""
