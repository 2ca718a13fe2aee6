"""The web console: server-rendered pages under /console for the people who manage templates.

It signs a person in with an application's client id and secret (the API's own token grant),
keeps the token in a sealed, HttpOnly, SameSite=Strict session cookie, and authenticates each
page with the API's own middleware. Every page calls the functions the API's handlers call
(infra/http/templates.py, template_views.py, assets.py, ...), with the same caller, so a person
sees and may change exactly what their grants allow, and every refusal comes from the domain.
"""
