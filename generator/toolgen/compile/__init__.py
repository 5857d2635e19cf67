"""The compile stages: an OpenAPI document and an intent map -> the typed IR (`ApiIR`)."""
