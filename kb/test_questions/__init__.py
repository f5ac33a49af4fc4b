"""Test questions that guard an edit: questions a writer attaches to a page, each with the facts
a right answer must state, answered again after every indexing of the page and flagged when an
edit broke them. kb owns the questions and their stored runs (they go with the page); the
assistant answers them (``assistant.services.test_question_runs``), told by ``kb.events``.

- ``models``: ``TestQuestion``, ``TestQuestionRun``;
- ``services``: who may edit them, saving and deleting, recording a run and its flag;
- ``selectors``: the latest result of each question, the flags a page list or history shows.
"""
