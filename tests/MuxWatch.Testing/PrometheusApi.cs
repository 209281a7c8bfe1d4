using System.Text.Json;

namespace MuxWatch.Testing;

/// <summary>Queries a real Prometheus over its HTTP API (instant, range, label values) and its alerts.</summary>
public sealed class PrometheusApi(HttpClient client)
{
    /// <summary>The result vector or matrix of an instant query at <paramref name="time"/>.</summary>
    public Task<JsonElement> QueryAsync(string expr, DateTimeOffset time) =>
        ResultAsync($"/api/v1/query?query={Uri.EscapeDataString(expr)}&time={time.ToUnixTimeSeconds()}", expr);

    /// <summary>The result matrix of a range query.</summary>
    public Task<JsonElement> QueryRangeAsync(string expr, DateTimeOffset start, DateTimeOffset end, TimeSpan step) =>
        ResultAsync($"/api/v1/query_range?query={Uri.EscapeDataString(expr)}&start={start.ToUnixTimeSeconds()}&end={end.ToUnixTimeSeconds()}&step={(int)step.TotalSeconds}", expr);

    /// <summary>The values of <paramref name="label"/> among the series of <paramref name="selector"/>.</summary>
    public async Task<List<string>> LabelValuesAsync(string selector, string label, DateTimeOffset start, DateTimeOffset end)
    {
        var path = $"/api/v1/label/{label}/values?match[]={Uri.EscapeDataString(selector)}&start={start.ToUnixTimeSeconds()}&end={end.ToUnixTimeSeconds()}";
        using var response = await client.GetAsync(new Uri(path, UriKind.Relative)).ConfigureAwait(false);
        var body = await response.Content.ReadAsStringAsync().ConfigureAwait(false);
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"Prometheus refused label_values({selector}, {label}): {body}");
        }

        using var document = JsonDocument.Parse(body);
        return [.. document.RootElement.GetProperty("data").EnumerateArray().Select(v => v.GetString()!)];
    }

    /// <summary>The alerts Prometheus holds now (pending and firing).</summary>
    public async Task<JsonElement> AlertsAsync()
    {
        using var response = await client.GetAsync(new Uri("/api/v1/alerts", UriKind.Relative)).ConfigureAwait(false);
        using var document = JsonDocument.Parse(await response.Content.ReadAsStringAsync().ConfigureAwait(false));
        return document.RootElement.GetProperty("data").GetProperty("alerts").Clone();
    }

    private async Task<JsonElement> ResultAsync(string pathAndQuery, string expr)
    {
        using var response = await client.GetAsync(new Uri(pathAndQuery, UriKind.Relative)).ConfigureAwait(false);
        var body = await response.Content.ReadAsStringAsync().ConfigureAwait(false);
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"Prometheus refused '{expr}': {body}");
        }

        using var document = JsonDocument.Parse(body);
        return document.RootElement.GetProperty("data").GetProperty("result").Clone();
    }
}
