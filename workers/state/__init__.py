"""What every worker host shares besides the schedule: locks, head records, rate limits, fences."""
