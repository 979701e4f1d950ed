"""The Streamlit workbench (`streamlit run app.py` or `opforge ui`): page config and navigation.
The pages live in ui/pages/ and call library functions; the registry is $OPFORGE_DB."""
import streamlit as st

from opforge.ui.state import sidebar_status

st.set_page_config(page_title="opforge workbench", page_icon=":material/build:", layout="wide")
page = st.navigation([
    st.Page("ui/pages/request.py", title="Request a kernel", icon=":material/edit_note:", url_path="request", default=True),
    st.Page("ui/pages/watch.py", title="Watch runs", icon=":material/monitoring:", url_path="watch"),
    st.Page("ui/pages/review.py", title="Review", icon=":material/rule:", url_path="review"),
    st.Page("ui/pages/export.py", title="Export", icon=":material/package_2:", url_path="export"),
])
sidebar_status()
page.run()
