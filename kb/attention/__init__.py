"""Reads for the stewards' "Policies needing attention" page that need only the content:

- ``documents``: pages whose review date has passed or is near, pages whose indexing failed;
- ``contradictions``: passages of two current pages about the same thing that state different
  numbers, durations or amounts (``quantities`` reads those values out of a passage).

The lists that need the chat's records (pages cited by thumbed-down answers, pages no answer
cited) are in ``assistant.attention``: ``kb`` reads nothing of the apps built on it.
"""
