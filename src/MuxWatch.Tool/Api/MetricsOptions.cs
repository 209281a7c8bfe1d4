namespace MuxWatch.Tool.Api;

/// <summary>Who may read <c>/metrics</c>, and on which port, bound from <c>MuxWatch:Metrics</c>.</summary>
internal sealed class MetricsOptions
{
    public const string SectionName = "MuxWatch:Metrics";

    /// <summary>When set, <c>/metrics</c> requires <c>Authorization: Bearer &lt;token&gt;</c> (Prometheus: <c>authorization.credentials</c>).</summary>
    public string? BearerToken { get; set; }

    /// <summary>When set, <c>/metrics</c> answers only on this port (list it in <c>Urls</c> too); other ports answer 404.</summary>
    public int? Port { get; set; }
}
