"""Help-center analytics for staff: questions per day and week, deflection counted two ways,
topics, and the daily rollup that keeps the page fast at millions of stored questions."""
