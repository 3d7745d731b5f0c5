"""The policy files: YAML with places (source), the format's spec language
(model) and its v1 definition (format_v1), units, errors, validation across
files (validate) and the parse cache. Imports nothing of the package."""
