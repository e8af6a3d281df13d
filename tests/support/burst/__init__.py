"""The burst of issue 7: the plan and its promises (``check``), the sender (``send``), and
the rig that runs the App as deployed against the fakes (``rig``)."""
