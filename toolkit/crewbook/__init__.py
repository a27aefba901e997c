"""crewbook: a notebook-first toolkit for the workflow model of AI delivery teams."""
