"""The GitHub Action: action.yml, `gitneural action`, the README workflow."""
