"""Stage `review`: what a reviewer of an intent map or of a pull request needs.

`lint` (intent map + spec + IR -> findings; its linter is a stage of the build too), `diff` (two
versions of the generated folder -> the changes of the tool surface, risky ones first) and `init`
(a spec -> a draft intent map). Each module names its input and output.
"""
