"""API keys in admin: create one (the full key is shown once, in a message after saving), see
when each was last used, revoke. Editing keeps the secret and the audience: a key's scope is
fixed when it is handed out; a different scope is a new key."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from assistant.api.keys import api_key_create, api_key_revoke, api_key_scope_check, origins_clean
from assistant.api.models import ApiKey


class ApiKeyForm(forms.ModelForm):
    allowed_origins = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="One origin per line, e.g. https://shop.example.com. Empty: the key may not "
        "be used from a browser page (servers and apps send no Origin and are not affected).",
    )

    actor: Any = None  # the signed-in user, set by ApiKeyAdmin.get_form

    class Meta:
        model = ApiKey
        fields = ["name", "audience", "rate_limit_per_minute", "allowed_origins"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["allowed_origins"] = "\n".join(self.instance.allowed_origins)

    def clean_allowed_origins(self) -> list[str]:
        text = self.cleaned_data.get("allowed_origins") or ""
        return origins_clean(text.replace(",", "\n").splitlines())

    def clean_audience(self) -> str:
        audience = self.cleaned_data["audience"]
        if not self.instance.pk:
            try:
                api_key_scope_check(actor=self.actor, audience=audience)
            except PermissionDenied as exc:
                raise ValidationError(str(exc)) from exc
        return audience


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    form = ApiKeyForm
    list_display = [
        "name",
        "shown_prefix",
        "audience",
        "rate_limit_per_minute",
        "last_used_at",
        "state",
    ]
    list_filter = ["audience", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "prefix"]
    actions = ["revoke"]

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> list[str]:
        if obj is None:
            return []
        return [
            "shown_prefix",
            "audience",
            "created_by",
            "created_at",
            "last_used_at",
            "revoked_at",
        ]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any):
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"actor": request.user})

    @admin.display(description="Key")
    def shown_prefix(self, obj: ApiKey) -> str:
        return f"gw_{obj.prefix}_…"

    @admin.display(description="State")
    def state(self, obj: ApiKey) -> str:
        return "active" if obj.is_active else f"revoked {obj.revoked_at:%Y-%m-%d %H:%M}"

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        data = form.cleaned_data
        created = api_key_create(
            actor=request.user,
            name=data["name"],
            audience=data["audience"],
            rate_limit_per_minute=data["rate_limit_per_minute"],
            allowed_origins=data["allowed_origins"],
        )
        # The admin goes on with ``obj`` (history entry, redirect): make it the created row.
        for field in ApiKey._meta.concrete_fields:
            setattr(obj, field.attname, getattr(created.api_key, field.attname))
        obj._state.adding = False
        self.message_user(
            request,
            f"The API key, shown this once (only its hash is stored): {created.key}",
            level=messages.WARNING,
        )

    @admin.action(
        description="Revoke the selected keys (requests with them get 401)",
        permissions=["change"],
    )
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        revoked = sum(api_key_revoke(api_key=key, actor=request.user) for key in queryset)
        self.message_user(request, f"Revoked {revoked} key(s).", level=messages.SUCCESS)
