using System.Net;
using System.Text;
using System.Text.Json;

namespace MuxWatch.Tool.Tests;

/// <summary>Listings are the largest answers: at most four are written at once, the fifth is refused at once.</summary>
public sealed class ListingLimitTests
{
    [Fact]
    public async Task A_fifth_listing_while_four_are_being_written_is_refused_at_once()
    {
        await using var sidecar = new InMemorySidecar(("MuxWatch:Targets:0:Name", "none"), ("MuxWatch:Targets:0:ConnectionString", "127.0.0.1:1"));
        var message = "Timeout performing GET listing (5000ms), qu: 0, qs: 6, in: 0, serverEndpoint: 10.1.2.3:6379, WORKER: (Busy=40,Free=32727,Min=8,Max=32767), note: " + new string('n', 400);
        var body = string.Concat(Enumerable.Repeat(JsonSerializer.Serialize(new { message }) + "\n", 1000));
        using (var posted = await sidecar.Client.PostAsync(new Uri("/api/timeouts", UriKind.Relative), new StringContent(body, Encoding.UTF8, "application/x-ndjson")))
        {
            Assert.Equal(HttpStatusCode.OK, posted.StatusCode);
        }

        // Four clients that take the headers of a large listing and never read its body: each holds its
        // listing slot while the answer waits to be written.
        var held = new List<HttpResponseMessage>();
        for (var i = 0; i < 4; i++)
        {
            held.Add(await sidecar.Client.GetAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative), HttpCompletionOption.ResponseHeadersRead));
        }

        using var fifth = await sidecar.Client.GetAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative));

        Assert.All(held, response => Assert.Equal(HttpStatusCode.OK, response.StatusCode));
        Assert.Equal(HttpStatusCode.TooManyRequests, fifth.StatusCode);
        Assert.NotNull(fifth.Headers.RetryAfter);
        Assert.Equal("application/problem+json", fifth.Content.Headers.ContentType?.MediaType); // the library's refusals are problem details too
        foreach (var response in held)
        {
            response.Dispose();
        }

        // The four readers gone, their slots come back once their answers are abandoned.
        await MuxWatch.Testing.Eventually.UntilAsync(async () =>
        {
            using var afterwards = await sidecar.Client.GetAsync(new Uri("/api/timeouts?limit=10", UriKind.Relative));
            return afterwards.StatusCode == HttpStatusCode.OK;
        }, "listings to be answered again");

        using var unknown = await sidecar.Client.GetAsync(new Uri("/api/events?endpoint=nowhere:1", UriKind.Relative));
        Assert.Equal(HttpStatusCode.NotFound, unknown.StatusCode);
        Assert.Equal("application/problem+json", unknown.Content.Headers.ContentType?.MediaType);
    }
}
