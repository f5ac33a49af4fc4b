"""Choosing the fusion's parameters by measurement: dump every eval question's candidates with
both legs' scores once per eval set, then score any fusion of them offline (a re-sort of the
same candidates), with leave-one-set-out cross-validation and a per-question oracle."""
