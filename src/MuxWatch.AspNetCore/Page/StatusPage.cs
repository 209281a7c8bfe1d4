using System.Text.Encodings.Web;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;

namespace MuxWatch.AspNetCore.Page;

/// <summary>
/// The status page: one HTML file, a stylesheet and five scripts (the page's, its vocabulary and helpers, its incidents, slowest-commands and thread-pool sections), embedded in this assembly and served as
/// they are (nothing fetched from elsewhere at run time). The page holds no data; its script reads the
/// JSON API at the path given, with the bearer token the user enters, if the API wants one.
/// </summary>
internal static class StatusPage
{
    // No 'unsafe-inline' anywhere: every value the script shows is text, and a posted timeout message is anyone's text.
    private const string ContentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private static readonly string Html = ReadText("index.html");
    private static readonly byte[] Script = ReadBytes("muxwatch.js");
    private static readonly byte[] FormatScript = ReadBytes("muxwatch-format.js");
    private static readonly byte[] SlowCommandsScript = ReadBytes("muxwatch-slow-commands.js");
    private static readonly byte[] IncidentsScript = ReadBytes("muxwatch-incidents.js");
    private static readonly byte[] PoolScript = ReadBytes("muxwatch-pool.js");
    private static readonly byte[] Style = ReadBytes("muxwatch.css");

    public static void Map(RouteGroupBuilder group, string prefix, string apiPrefix)
    {
        group.MapGet("/", (HttpContext context) => Page(context, prefix, apiPrefix)).ExcludeFromDescription();
        group.MapGet("/muxwatch.js", (HttpContext context) => Asset(context, Script, "text/javascript; charset=utf-8")).ExcludeFromDescription();
        group.MapGet("/muxwatch-format.js", (HttpContext context) => Asset(context, FormatScript, "text/javascript; charset=utf-8")).ExcludeFromDescription();
        group.MapGet("/muxwatch-slow-commands.js", (HttpContext context) => Asset(context, SlowCommandsScript, "text/javascript; charset=utf-8")).ExcludeFromDescription();
        group.MapGet("/muxwatch-incidents.js", (HttpContext context) => Asset(context, IncidentsScript, "text/javascript; charset=utf-8")).ExcludeFromDescription();
        group.MapGet("/muxwatch-pool.js", (HttpContext context) => Asset(context, PoolScript, "text/javascript; charset=utf-8")).ExcludeFromDescription();
        group.MapGet("/muxwatch.css", (HttpContext context) => Asset(context, Style, "text/css; charset=utf-8")).ExcludeFromDescription();
    }

    private static IResult Page(HttpContext context, string prefix, string apiPrefix)
    {
        // Paths are made absolute here (under the app's PathBase), so the page works at /muxwatch and /muxwatch/ alike.
        var pathBase = context.Request.PathBase.Value ?? string.Empty;
        var html = Html
            .Replace("{{base}}", HtmlEncoder.Default.Encode(pathBase + prefix.TrimEnd('/')), StringComparison.Ordinal)
            .Replace("{{api}}", HtmlEncoder.Default.Encode(pathBase + apiPrefix.TrimEnd('/')), StringComparison.Ordinal);
        Protect(context.Response);
        return Results.Content(html, "text/html; charset=utf-8");
    }

    private static IResult Asset(HttpContext context, byte[] content, string contentType)
    {
        Protect(context.Response);
        return Results.Bytes(content, contentType);
    }

    private static void Protect(HttpResponse response)
    {
        response.Headers.ContentSecurityPolicy = ContentSecurityPolicy;
        response.Headers.XContentTypeOptions = "nosniff";
        response.Headers["Referrer-Policy"] = "no-referrer";
        response.Headers.CacheControl = "no-cache"; // a new version of the library serves its new page at once
    }

    private static byte[] ReadBytes(string name)
    {
        using var stream = typeof(StatusPage).Assembly.GetManifestResourceStream("MuxWatch.Page." + name)
            ?? throw new InvalidOperationException($"the status page's {name} is not embedded in {typeof(StatusPage).Assembly.GetName().Name}");
        using var copy = new MemoryStream();
        stream.CopyTo(copy);
        return copy.ToArray();
    }

    private static string ReadText(string name) => System.Text.Encoding.UTF8.GetString(ReadBytes(name));
}
