"""Lab code for the answer side: dumps and fits over the answer eval sets. Serving code never
imports it."""
