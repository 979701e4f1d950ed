"""The Streamlit workbench (`streamlit run app.py`, `opforge ui`): request, watch, review and export
kernels. Pages render and call library functions; the helpers here hold no Streamlit-free logic
that the CLI would also need."""
