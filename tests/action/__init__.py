"""The GitHub Action: action.yml, `gitneural action`, the documented workflow."""
