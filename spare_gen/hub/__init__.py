"""Publishing on the Hugging Face Hub: image-embedded copies of the question tables."""
