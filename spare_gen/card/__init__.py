"""The dataset card (``<out>/README.md``), composed once at the end of a job from its sections."""
