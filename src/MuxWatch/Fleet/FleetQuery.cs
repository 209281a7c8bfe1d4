using System.Globalization;
using System.Net.Http.Json;
using System.Text;
using MuxWatch.Json;
using MuxWatch.Model;

namespace MuxWatch.Fleet;

/// <summary>
/// Reads the fleet's recorded series for one endpoint over a span from the Prometheus that scrapes every instance,
/// through its documented HTTP API (one instant query, <c>GET /api/v1/query</c>). HttpClient, bounded: a timeout on
/// the whole call, a 1 MB reply at most, no redirect followed.
/// </summary>
internal sealed class FleetQuery : IDisposable
{
    /// <summary>The longest one query may take, the connection included.</summary>
    internal static readonly TimeSpan Timeout = TimeSpan.FromSeconds(5);

    /// <summary>How far back the rules' per-minute series look: the span read runs this far past the last timeout.</summary>
    internal static readonly TimeSpan RuleWindow = TimeSpan.FromMinutes(1);

    /// <summary>A scrape and an evaluation after the rules' minute: by then Prometheus has recorded it.</summary>
    internal static readonly TimeSpan EvaluationLag = TimeSpan.FromSeconds(15);

    private const int MaxReplyBytes = 1 << 20;
    private const int MaxEndpointChars = 300;

    private readonly HttpClient _client;

    /// <param name="prometheus">The Prometheus' base address (<c>http://prometheus:9090</c>, or under a path prefix).</param>
    public FleetQuery(Uri prometheus)
    {
        ArgumentNullException.ThrowIfNull(prometheus);
        var handler = new SocketsHttpHandler { ConnectTimeout = Timeout, AllowAutoRedirect = false, PooledConnectionLifetime = TimeSpan.FromMinutes(5) };
        var path = prometheus.AbsoluteUri.EndsWith('/') ? prometheus.AbsoluteUri : prometheus.AbsoluteUri + "/";
        _client = new HttpClient(handler) { BaseAddress = new Uri(path), Timeout = Timeout, MaxResponseContentBufferSize = MaxReplyBytes };
    }

    /// <summary>
    /// What the fleet said of <paramref name="endpoint"/> from <paramref name="from"/> to <paramref name="lastTimeout"/>
    /// (and the minute after it, which the rules' windows reach), read as of <paramref name="now"/>.
    /// </summary>
    /// <exception cref="FleetQueryException">Prometheus did not answer in time, refused, or answered something else.</exception>
    public async Task<FleetReading> ReadAsync(string endpoint, DateTimeOffset from, DateTimeOffset lastTimeout, DateTimeOffset now, CancellationToken cancellation)
    {
        var complete = lastTimeout + RuleWindow + EvaluationLag;
        var at = Min(now, complete);
        var range = TimeSpan.FromSeconds(Math.Clamp(Math.Ceiling((at - from).TotalSeconds), 60, 6 * 3600));
        var uri = RequestUri(Query(endpoint, range), at);
        PrometheusQueryReply? reply;
        try
        {
            using var response = await _client.GetAsync(uri, cancellation).ConfigureAwait(false);
            if (!response.IsSuccessStatusCode && (int)response.StatusCode is not (400 or 422 or 503))
            {
                throw new FleetQueryException("http-error", $"Prometheus answered HTTP {(int)response.StatusCode}");
            }

            reply = await response.Content.ReadFromJsonAsync(MuxWatchJson.TypeInfo<PrometheusQueryReply>(), cancellation).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellation.IsCancellationRequested)
        {
            throw new FleetQueryException("timeout", $"Prometheus did not answer within {Timeout.TotalSeconds:0} s");
        }
        catch (HttpRequestException ex)
        {
            throw new FleetQueryException("unreachable", "Prometheus could not be reached: " + ex.Message);
        }
        catch (System.Text.Json.JsonException)
        {
            throw new FleetQueryException("bad-reply", "Prometheus answered something other than a query result");
        }

        if (reply is not { Status: "success", Data.Result: { } result })
        {
            throw new FleetQueryException("refused", "Prometheus refused the query: " + Bounded(reply?.Error ?? "no reason given"));
        }

        var figures = result
            .Where(sample => sample.Metric is not null && sample.Metric.ContainsKey("figure") && sample.Value is [_, { } value] && value.ValueKind == System.Text.Json.JsonValueKind.String)
            .ToDictionary(sample => sample.Metric!["figure"], sample => Number(sample.Value![1].GetString()), StringComparer.Ordinal);
        var watching = figures.GetValueOrDefault("watching");
        var affected = Math.Min(figures.GetValueOrDefault("affected"), watching);
        var verdict = figures.GetValueOrDefault("server-side") > 0 ? FleetVerdict.ServerSide
            : figures.GetValueOrDefault("instance-side") > 0 ? FleetVerdict.InstanceSide
            : FleetVerdict.None;
        return new FleetReading(from, at, watching, affected, verdict)
        {
            Complete = at >= complete,
            Text = Say(endpoint, watching, affected, verdict) + (at >= complete ? string.Empty : " (so far: the minute after the last timeout is not all evaluated yet)"),
        };
    }

    /// <summary>
    /// One instant query for the four figures, each marked by a <c>figure</c> label: the most instances watching and
    /// affected in a minute of the span, and whether either verdict held in it. The thresholds stay in the rules.
    /// </summary>
    internal static string Query(string endpoint, TimeSpan range)
    {
        var selector = $"{{endpoint=\"{Escaped(endpoint)}\"}}[{(long)range.TotalSeconds}s]";
        return string.Join(" or ",
            $"label_replace(max_over_time(muxwatch:fleet_instances_watching:1m{selector}), \"figure\", \"watching\", \"\", \"\")",
            $"label_replace(max_over_time(muxwatch:fleet_instances_affected:1m{selector}), \"figure\", \"affected\", \"\", \"\")",
            $"label_replace(max_over_time(muxwatch:fleet_verdict:server_side{selector}), \"figure\", \"server-side\", \"\", \"\")",
            $"label_replace(count(max_over_time(muxwatch:fleet_verdict:instance_side{selector})), \"figure\", \"instance-side\", \"\", \"\")");
    }

    /// <summary>
    /// The instant query's request, relative to Prometheus' base address: the time as Prometheus reads it whatever the
    /// process's culture ("1795910474.123", never a decimal comma: MuxWatch runs in apps of every culture).
    /// </summary>
    internal static Uri RequestUri(string query, DateTimeOffset at) => new(string.Create(CultureInfo.InvariantCulture,
        $"api/v1/query?query={Uri.EscapeDataString(query)}&time={at.ToUnixTimeMilliseconds() / 1000.0:0.###}"), UriKind.Relative);

    /// <summary>What the figures say, as the incident shows it.</summary>
    internal static string Say(string endpoint, int watching, int affected, FleetVerdict verdict) => (watching, verdict) switch
    {
        (0, _) => $"Prometheus knew no instance watching {endpoint} then: the fleet rules (alerts/muxwatch.rules.yml) are not loaded, or the instances name the endpoint otherwise",
        (1, _) => $"only this instance watched {endpoint} then: no fleet to compare with",
        (_, FleetVerdict.ServerSide) => $"{affected} of {watching} instances watching {endpoint} timed out on it or lost it: most of them, so the server or the path every client shares",
        (_, FleetVerdict.InstanceSide) => $"{affected} of {watching} instances watching {endpoint} timed out on it or lost it; the others (the sidecar's probe among them, where one watches it) were answered: the cause is in the affected instance",
        _ => $"{affected} of {watching} instances watching {endpoint} timed out on it or lost it: too few to compare, or too split for a verdict",
    };

    /// <summary>A label value inside PromQL double quotes: backslashes and quotes escaped, bounded.</summary>
    internal static string Escaped(string value)
    {
        var bounded = value.Length > MaxEndpointChars ? value[..MaxEndpointChars] : value;
        var text = new StringBuilder(bounded.Length + 8);
        foreach (var c in bounded)
        {
            _ = c switch
            {
                '\\' => text.Append(@"\\"),
                '"' => text.Append("\\\""),
                '\n' => text.Append("\\n"),
                _ when char.IsControl(c) => text,
                _ => text.Append(c),
            };
        }

        return text.ToString();
    }

    private static int Number(string? text) =>
        double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var value) && double.IsFinite(value) && value >= 0
            ? (int)Math.Min(value, 1_000_000)
            : 0;

    private static string Bounded(string text) => text.Length > 200 ? text[..200] + "…" : text;

    private static DateTimeOffset Min(DateTimeOffset a, DateTimeOffset b) => a < b ? a : b;

    public void Dispose() => _client.Dispose();
}

/// <summary>A fleet query that failed; <see cref="Reason"/> is a short fixed word, fit for a metric label.</summary>
internal sealed class FleetQueryException(string reason, string message) : Exception(message)
{
    /// <summary><c>timeout</c>, <c>unreachable</c>, <c>http-error</c>, <c>bad-reply</c> or <c>refused</c>.</summary>
    public string Reason { get; } = reason;
}
