"""Topics for the simulated demo's texts: Health, Natural Science, Social Science, Technology.

Same record format as ``demo_humanities``: a singular subject, then four facts as predicates,
the first a definition; lines starting with "|" continue the record above.
"""

from __future__ import annotations

HEALTH = """
type 2 diabetes | occurs when the body resists insulin or makes too little of it
| is linked to excess weight and physical inactivity
| can often be managed with diet, exercise and medication such as metformin
| raises the risk of heart, kidney and eye disease when uncontrolled
regular aerobic exercise | strengthens the heart and improves circulation
| helps control weight and blood sugar
| is recommended at about 150 minutes a week of moderate intensity for adults
| can improve mood and sleep
vaccination | trains the immune system to recognise a pathogen without causing the disease
| creates memory cells that respond quickly on later exposure
| protects vulnerable people through herd immunity when coverage is high
| is tested in staged clinical trials before approval
sleep deprivation | impairs attention, memory and judgment | raises the risk of accidents
| is linked to obesity, diabetes and heart disease over time
| usually means regularly sleeping less than seven hours for an adult
antibiotic resistance | arises when bacteria evolve to survive the drugs meant to kill them
| is accelerated by unnecessary or incomplete courses of antibiotics
| makes common infections harder to treat | is ranked by the WHO among the top global health threats
high blood pressure | often causes no symptoms, which is why it is called a silent killer
| is diagnosed under US guidelines when readings stay at or above 130/80 mmHg
| raises the risk of stroke and heart attack
| can be lowered by eating less salt, exercising and taking medication
the Mediterranean diet | emphasises vegetables, legumes, whole grains, fish and olive oil
| limits red meat and processed foods | is associated with lower rates of heart disease
| is more an eating pattern than a strict plan
dehydration | occurs when the body loses more fluid than it takes in
| causes thirst, dark urine, dizziness and fatigue
| is especially dangerous for infants and older adults
| is usually treated with oral fluids that contain salts
migraine | is a neurological condition with recurring, often one-sided headaches
| can come with nausea and sensitivity to light | is sometimes preceded by an aura
| can be triggered by stress, lack of sleep or certain foods
the placebo effect | is an improvement in symptoms caused by expecting a treatment to work
| is why clinical trials compare treatments with inactive controls
| is strongest for subjective symptoms such as pain | does not cure the underlying disease
mindfulness meditation | trains attention on present-moment experience without judgment
| has evidence for reducing symptoms of stress and anxiety
| is taught in programmes such as MBSR | works best with regular practice
iron-deficiency anaemia | occurs when the body lacks the iron to make enough haemoglobin
| causes tiredness, pale skin and shortness of breath
| is common in pregnancy and with heavy periods
| is treated with iron-rich food or supplements after a blood test
seasonal influenza | spreads through droplets from coughs and sneezes
| causes fever, body aches and fatigue | is best prevented by a yearly vaccine
| can lead to pneumonia in high-risk groups
sunscreen | protects the skin by absorbing or reflecting ultraviolet rays
| should have SPF 30 or higher for daily outdoor use
| needs reapplying about every two hours and after swimming
| lowers the risk of skin cancer and premature ageing
a food allergy | is an immune reaction to proteins in a particular food
| most often involves peanuts, tree nuts, milk, eggs, shellfish, wheat, soy or fish
| can cause anaphylaxis, which needs adrenaline at once
| differs from an intolerance, which does not involve the immune system
"""

NATURAL_SCIENCE = """
photosynthesis | converts light energy into chemical energy stored in glucose
| takes place mainly in the chloroplasts of leaf cells | releases oxygen from splitting water
| depends on light intensity, carbon dioxide and temperature
plate tectonics | describes Earth's outer shell as a set of moving plates
| explains earthquakes and volcanoes along plate boundaries
| is driven by heat flow in the mantle | accounts for continental drift over millions of years
natural selection | favours heritable traits that improve survival and reproduction
| was described by Charles Darwin and Alfred Russel Wallace
| acts on variation produced by mutation and recombination
| can be watched at work in antibiotic-resistant bacteria
the water cycle | moves water through evaporation, condensation and precipitation
| is powered by energy from the Sun | stores most of Earth's fresh water in ice and groundwater
| shapes weather and climate
a black hole | is a region where gravity prevents even light from escaping
| forms when a very massive star collapses | has a boundary called the event horizon
| was first imaged in 2019 by the Event Horizon Telescope
the greenhouse effect | traps heat as gases like carbon dioxide absorb infrared radiation
| keeps Earth about 33 degrees Celsius warmer than it would otherwise be
| is intensified by burning fossil fuels | drives the current rise in global temperatures
DNA replication | copies the genome before a cell divides
| is semi-conservative, keeping one old strand in each new molecule
| relies on the enzyme DNA polymerase | includes proofreading that keeps error rates very low
inertia | is the tendency of an object to keep its state of motion
| is described by Newton's first law
| increases with mass | explains why passengers lurch forward when a car brakes
the periodic table | arranges the elements by atomic number
| groups elements with similar properties in columns
| was first organised by Dmitri Mendeleev in 1869 | predicted elements not yet discovered
the ozone layer | absorbs most of the Sun's ultraviolet-B radiation
| lies mainly in the stratosphere | was thinned by chlorofluorocarbons
| has been slowly recovering since the 1987 Montreal Protocol
entropy | measures how many ways a system's energy can be arranged
| never decreases in an isolated system, by the second law of thermodynamics
| explains why heat flows from hot to cold | sets limits on the efficiency of engines
the adaptive immune response | targets specific pathogens the body has met
| uses antibodies made by B cells | relies on T cells to kill infected cells
| remembers past infections through memory cells
the ocean tide | is caused mainly by the Moon's gravity
| rises and falls about twice a day in most places
| is strongest at new and full moon, when the Sun and Moon line up
| affects coastal ecosystems and navigation
radioactive decay | is the spontaneous change of an unstable atomic nucleus
| releases alpha particles, beta particles or gamma rays
| follows a fixed half-life for each isotope | makes carbon dating possible
the speed of light | is about 299,792 kilometres per second in a vacuum
| is the same for every observer, according to special relativity
| limits how fast information can travel | means we see distant stars as they were long ago
"""

SOCIAL_SCIENCE = """
the law of supply and demand | sets prices where the quantity supplied equals the quantity demanded
| predicts that shortages push prices up | assumes a competitive market
| explains why a bumper harvest can lower farmers' revenue
inflation | is a general rise in prices that reduces purchasing power
| is measured by indices such as the consumer price index
| is targeted at about 2 percent by many central banks
| can be driven by demand, costs or expectations
confirmation bias | is the tendency to favour information that supports existing beliefs
| affects how people search for and remember evidence
| can be reduced by actively looking for disconfirming evidence
| plays a large role in political polarisation
the tragedy of the commons | describes how a shared resource gets overused when each user acts alone
| was popularised by Garrett Hardin in 1968 | applies to fisheries, pastures and the atmosphere
| was shown by Elinor Ostrom to be avoidable through community rules
social media | shapes how news spreads and opinions form
| rewards content that provokes strong reactions | can connect people with niche communities
| raises concerns about privacy and teenagers' mental health
urbanisation | is the growing share of people living in cities
| passed half of the world's population around 2007
| brings economic opportunity and higher productivity
| strains housing, transport and services when it is rapid
the prisoner's dilemma | shows why two rational players may not cooperate even when both would gain
| is a central example in game theory | leads to more cooperation when the game is repeated
| models arms races and price wars
representative democracy | lets citizens elect officials to make laws on their behalf
| relies on free and fair elections
| separates legislative, executive and judicial power in many systems
| contrasts with direct democracy, where citizens vote on laws themselves
opportunity cost | is the value of the best alternative given up when making a choice
| applies to time as well as money | explains why a 'free' activity can still be costly
| is central to economic decision-making
Maslow's hierarchy of needs | ranks needs from physiological and safety up to self-actualisation
| was proposed by Abraham Maslow in 1943 | is usually drawn as a pyramid
| has weak empirical support for its strict order
the bystander effect | makes people less likely to help a victim when others are present
| is explained by diffusion of responsibility
| was studied after the 1964 murder of Kitty Genovese
| weakens when one bystander is addressed directly
globalisation | increases the flow of goods, capital, people and ideas across borders
| has lowered prices and lifted many people out of poverty
| has also moved manufacturing jobs between countries
| is debated for its effects on inequality and local cultures
the minimum wage | sets the lowest hourly pay employers may offer
| aims to reduce poverty among low-paid workers
| may cost jobs if set far above market wages
| has mixed evidence on employment effects at moderate levels
social capital | refers to networks of relationships and trust
| helps communities solve shared problems | was popularised by Robert Putnam in Bowling Alone
| can exclude outsiders when groups are closed
the gender pay gap | is the difference between the average earnings of men and women
| partly reflects differences in occupations and hours
| persists after those differences are accounted for
| has narrowed over recent decades in many countries
"""

TECHNOLOGY = """
public-key cryptography | uses a pair of keys, one public and one private
| lets anyone encrypt a message that only the key's owner can decrypt
| underpins HTTPS and digital signatures
| relies on problems such as factoring large numbers being hard
cloud computing | delivers computing resources over the internet on demand
| lets companies pay for capacity as they use it
| is sold as infrastructure, platforms or software as a service
| raises questions about data location and vendor lock-in
the solid-state drive | stores data on flash memory chips with no moving parts
| reads and writes much faster than a hard disk | is more resistant to physical shock
| wears out after a limited number of write cycles
machine learning | lets computers learn patterns from data instead of following hand-written rules
| includes supervised, unsupervised and reinforcement learning
| needs representative training data to generalise well | can reproduce biases in its data
two-factor authentication | requires a second proof of identity besides a password
| often uses a code from an app or a hardware key
| blocks most attacks that rely on stolen passwords
| is weaker when the second factor is a text message
the Internet Protocol | routes packets of data between networks
| gives every connected device an IP address
| exists as version 4, with about 4.3 billion addresses, and version 6
| works with TCP to deliver data reliably
the lithium-ion battery | stores energy by moving lithium ions between electrodes
| powers phones, laptops and electric cars | loses capacity gradually with each charge cycle
| can overheat and catch fire if damaged
GPS | determines position from the signals of a constellation of satellites
| needs signals from at least four satellites for a 3D fix
| corrects for relativistic effects on the satellites' clocks | is operated by the US Space Force
blockchain | keeps a shared ledger of records linked by cryptographic hashes
| makes past entries very hard to alter without detection
| underlies cryptocurrencies such as Bitcoin
| is usually slower and costlier than a conventional database
5G | is the fifth generation of mobile network technology
| offers higher speeds and lower latency than 4G
| uses a wider range of radio frequencies, including millimetre waves
| supports many more connected devices per area
open-source software | publishes its source code for anyone to inspect, modify and share
| includes projects such as Linux and Firefox | is built by communities and companies together
| is governed by licences such as the GPL and the MIT licence
phishing | tricks people into revealing passwords or payment details
| usually arrives as a message imitating a trusted sender | often creates false urgency
| is countered by checking links and using multi-factor authentication
the relational database | stores data in tables of rows and columns
| is queried and updated with SQL | links tables through keys
| keeps transactions consistent through its ACID guarantees
3D printing | builds objects layer by layer from a digital model
| is used for prototypes, medical implants and spare parts
| wastes less material than cutting it away | is still slow for mass production
the electric car | is driven by electric motors powered by a battery
| produces no tailpipe emissions | is cheaper per kilometre to run than most petrol cars
| depends on charging infrastructure for long trips
"""
