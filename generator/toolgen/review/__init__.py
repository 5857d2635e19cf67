"""Stage `review`: what a reviewer of an intent map or of a pull request needs.

`lint` (intent map + spec + IR -> findings; its linter is a stage of the build too) and `diff` (two
versions of the generated folder, read by `diff_inputs` from folders or a git ref -> the changes of
the tool surface, risky ones first). Each module names its input and output.
"""
