using System.Buffers;
using System.Text.RegularExpressions;

namespace MuxWatch.Reading;

/// <summary>
/// Removes credentials from text before MuxWatch keeps or shows any of it: <c>password=</c>,
/// <c>user=</c> and similar options of a StackExchange.Redis configuration string (quoted or not,
/// <c>=</c>, <c>: </c> or a URL-encoded <c>%3D</c>), environment-style names (<c>REDIS_PASSWORD=</c>,
/// <c>redisPassword=</c>), JSON members (<c>"Password": "x"</c>), tokens, and the user information of a
/// <c>redis://user:password@host</c> address (a password with <c>/</c> or <c>@</c> in it included).
/// </summary>
/// <remarks>
/// Timeout messages do not carry credentials, but what people paste and log shippers post often has a
/// connection string in the same log line; a tool read during incidents must never echo it. Redact
/// before cutting text short (<see cref="CutAtToken"/>): a cut can split a secret from what marks it.
/// Over-redaction is accepted: a masked harmless value costs nothing, a shown password costs a rotation.
/// </remarks>
public static partial class SecretRedactor
{
    /// <summary>What a removed secret is replaced with.</summary>
    internal const string Mask = "***";

    // Words every secret's name contains: one vectorised scan spares most messages the regexes.
    private static readonly SearchValues<string> NameTelltales = SearchValues.Create(["pass", "pwd", "user", "secret", "token"], StringComparison.OrdinalIgnoreCase);

    /// <summary>The text with every credential replaced by <see cref="Mask"/>.</summary>
    public static string Redact(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        if (text.AsSpan().IndexOfAny(NameTelltales) >= 0)
        {
            text = JsonSecret().Replace(text, m => m.Groups["name"].Value + ": \"" + Mask + "\"");
            text = OptionSecret().Replace(text, m => m.Groups["name"].Value + m.Groups["sep"].Value + Mask);
        }

        // User information needs an '@'; the client's help links ("https://...") have none.
        return text.Contains('@', StringComparison.Ordinal)
            ? UrlUserInfo().Replace(text, m => m.Groups["scheme"].Value + Mask + "@")
            : text;
    }

    /// <summary>
    /// <paramref name="text"/> cut to at most <paramref name="maxChars"/>, dropping the token the cut
    /// would split (back to the last space or comma): half a URL or half an option could be a secret
    /// whose marker was cut off.
    /// </summary>
    internal static string CutAtToken(string text, int maxChars)
    {
        ArgumentNullException.ThrowIfNull(text);
        if (text.Length <= maxChars)
        {
            return text;
        }

        var cut = text[..maxChars];
        var boundary = cut.AsSpan().LastIndexOfAny(' ', ',', ';');
        return boundary > 0 ? cut[..boundary] : string.Empty;
    }

    // "password": "x", "Password":"x", "redisPassword": 'x', "user": "app": a JSON (or JSON-like) member.
    [GeneratedRegex(@"(?<name>[""'][\w.\-]*?(?:password|passwd|pwd|secret|token|user(?:_?name)?)[""'])\s*:\s*(?:""(?:[^""\\]|\\.)*""|'[^']*'|[^,}\s]*)",
        RegexOptions.IgnoreCase | RegexOptions.CultureInvariant, matchTimeoutMilliseconds: 1000)]
    private static partial Regex JsonSecret();

    // password=x, Password = "x y", pwd='x', REDIS_PASSWORD=x, redisPassword=x, password%3Dx, password: x,
    // user=app, access_token=x. "user:42" (no space after the colon) is a key, not a credential.
    [GeneratedRegex(@"(?<name>\b[\w.\-]*?(?:password|passwd|pwd|secret|token)|\buser(?:_?name)?)(?<sep>\s*(?:=|%3[Dd])\s*|:\s+)(?:""[^""]*""?|'[^']*'?|[^,;\s""'&]*)",
        RegexOptions.IgnoreCase | RegexOptions.CultureInvariant, matchTimeoutMilliseconds: 1000)]
    private static partial Regex OptionSecret();

    // rediss://user:secret@host -> rediss://***@host; up to the last '@' of the token, so a password
    // holding '/' or '@' is masked whole.
    [GeneratedRegex(@"(?<scheme>\b[a-z][a-z0-9+.\-]*://)[^\s,;""']*@", RegexOptions.IgnoreCase | RegexOptions.CultureInvariant, matchTimeoutMilliseconds: 1000)]
    private static partial Regex UrlUserInfo();
}
