"""Pseudonymous volunteer ids: stable within a campaign, unlinkable across."""
import hashlib
import hmac


def pseudonym(campaign, user_id):
    digest = hmac.new(campaign.pseudonym_salt.encode(), str(user_id).encode(), hashlib.sha256)
    return "v-" + digest.hexdigest()[:10]
