"""The web console: server-rendered pages under /console for the people who manage templates. A
person signs in with an application's id and secret, and each page calls the API's actions as
that caller (docs/decisions/0027-console-and-api-share-actions.md, 0030-console-forms.md)."""
